set terminal svg size 960,600 dynamic
set output 'synth_gpus.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd '.'
set title "FAST synthesis time vs GPUs\nh200, 8 GPUs per server, zipf (skew 0.8), 64 MiB per GPU, 3 seeds"
set key inside left top
set xlabel 'GPUs'
set ylabel 'synthesis time (us)'
set logscale xy
set xrange [24.6154:5324.8]
plot 'synth_gpus.dat' using 1:2:3:4 with yerrorlines lw 2 pt 7 lc rgb '#9400d3' title 'this implementation (mean, min..max)', 'synth_paper.dat' using 1:2 with points pt 5 ps 1.6 lc rgb '#e69f00' title 'FAST paper (25 us at 32 .. 77 ms at 320 GPUs)'
