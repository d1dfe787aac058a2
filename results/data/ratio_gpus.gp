set terminal svg size 960,600 dynamic
set output 'ratio_gpus.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd 'results/data'
set title 'FAST simulated time / LP lower bound vs cluster size (64 MiB per GPU)'
set xlabel 'GPUs'
set ylabel 'time / LP bound'
set logscale x 2
set yrange [0.95:*]
plot 'ratio_gpus_h200_skew0.4.dat' using 1:2 with linespoints lw 2 title 'h200 Zipf 0.4', 'ratio_gpus_h200_skew0.8.dat' using 1:2 with linespoints lw 2 title 'h200 Zipf 0.8', 'ratio_gpus_mi300x-100g_skew0.4.dat' using 1:2 with linespoints lw 2 title 'mi300x-100g Zipf 0.4', 'ratio_gpus_mi300x-100g_skew0.8.dat' using 1:2 with linespoints lw 2 title 'mi300x-100g Zipf 0.8', 1 with lines dt 2 lc rgb 'black' title 'bound'
