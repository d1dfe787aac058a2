set terminal svg size 960,600 dynamic
set output 'ratio_gpus.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "FAST simulated time / lower bound vs cluster size\n8 GPUs per server, zipf, 64 MiB per GPU, mean of 2 seeds"
set xlabel 'GPUs'
set ylabel 'time / bound (LP + latency floor)'
set logscale x 2
set yrange [0.983068:1.22858]
plot 'ratio_gpus_h200_skew0.4.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 5 ps 1.2 lc rgb '#d55e00' title 'h200 Zipf 0.4', 'ratio_gpus_h200_skew0.8.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 7 ps 1.2 lc rgb '#cc79a7' title 'h200 Zipf 0.8', 'ratio_gpus_mi300x-100g_skew0.4.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 9 ps 1.2 lc rgb '#555555' title 'mi300x-100g Zipf 0.4', 'ratio_gpus_mi300x-100g_skew0.8.dat' using 1:2 with linespoints lw 2.0 dt 1 pt 11 ps 1.2 lc rgb '#000080' title 'mi300x-100g Zipf 0.8', 1 with lines dt 2 lw 1.5 lc rgb 'black' title 'bound'
